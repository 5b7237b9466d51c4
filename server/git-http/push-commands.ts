import { PktLineError, PktReader } from "./pkt-line";

/** One ref update a push asks for: `old new refname` (an all-zero id is "none": a creation or a deletion). */
export type RefUpdate = { oldOid: string; newOid: string; refName: string };

/** The command list at the front of a git-receive-pack request, and the bytes read to find it. */
export type PushCommands = {
  updates: RefUpdate[];
  /** The capabilities the client asked for (after the NUL of the first command). */
  capabilities: string[];
  /** Every byte read from the body so far (the command list and whatever followed it in the same chunks). */
  prefix: Buffer;
};

/** The command list may not be larger than this (a push of thousands of refs is still far below it). */
export const MAX_COMMANDS_BYTES = 4 * 1024 * 1024;

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Whether this object id is git's "no object" (all zeros): the new side of a deletion, the old side of a creation. */
export function isZeroOid(oid: string): boolean {
  return /^0+$/.test(oid);
}

/**
 * Read the command list from the front of a receive-pack request body: `shallow <oid>` lines (a push
 * from a shallow clone), then `old new refname` lines (the first with `\0capabilities`), then a
 * flush-pkt. Reads only as far as that flush (within the chunk it arrives in); the caller replays
 * `prefix` and then the rest of `body`. Throws PktLineError on anything else (a signed push
 * included: `push-cert` is never advertised here).
 */
export async function readPushCommands(body: AsyncIterator<Buffer>): Promise<PushCommands> {
  const reader = new PktReader();
  const updates: RefUpdate[] = [];
  let capabilities: string[] = [];
  let bytes = 0;
  for (;;) {
    const line = reader.next();
    if (line === "flush") return { updates, capabilities, prefix: reader.consumed };
    if (line === null) {
      if (bytes >= MAX_COMMANDS_BYTES) throw new PktLineError(`the push command list is longer than ${MAX_COMMANDS_BYTES} bytes`);
      const { value, done } = await body.next();
      if (done) throw new PktLineError("the push request ended before its command list did");
      bytes += value.length;
      reader.push(value);
      continue;
    }
    const text = line.toString("utf8").replace(/\n$/, "");
    if (updates.length === 0 && /^shallow [0-9a-f]+$/.test(text)) continue;
    const nul = text.indexOf("\0");
    const command = nul === -1 ? text : text.slice(0, nul);
    if (updates.length === 0 && nul !== -1) capabilities = text.slice(nul + 1).split(" ").filter(Boolean);
    updates.push(parseCommand(command));
  }
}

function parseCommand(command: string): RefUpdate {
  const [oldOid, newOid, refName, ...extra] = command.split(" ");
  if (!oldOid || !newOid || !refName || extra.length > 0 || !OID.test(oldOid) || !OID.test(newOid)) {
    throw new PktLineError(`not a push command: ${JSON.stringify(command.slice(0, 200))}`);
  }
  return { oldOid, newOid, refName };
}

/** The branches agents push: `refs/heads/switchyard/<alias>`. */
export const AGENT_REF_PREFIX = "refs/heads/switchyard/";

/**
 * Why the default rule refuses this update, or null when it allows it: only creations and
 * fast-or-forced updates of `refs/heads/switchyard/<something>`, never a deletion.
 */
export function defaultRefusal(update: RefUpdate): string | null {
  if (isZeroOid(update.newOid)) return "deleting refs is not allowed here";
  const name = update.refName.slice(AGENT_REF_PREFIX.length);
  if (!update.refName.startsWith(AGENT_REF_PREFIX) || name === "") return `only ${AGENT_REF_PREFIX}* may be pushed`;
  if (/\.\.|\/\/|@\{|[ ~^:?*[\\]|\/$|\.lock$|\.$/.test(name) || hasControl(name)) return "not a valid branch name";
  return null;
}

/** Whether `text` holds a control character (below 0x20, or DEL). */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
