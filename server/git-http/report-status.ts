import { FLUSH_PKT, MAX_PKT_LEN, pktLine } from "./pkt-line";
import { hasControl, type RefUpdate } from "./push-commands";

/** A refused push, as the git client shows it: each ref `! [remote rejected] <ref> (<reason>)`. */
export type PushRefusal = {
  /** The reason per refused ref name; the push's other refs are refused with it (all or nothing). */
  reasons: Map<string, string>;
  /** Printed by the client as `remote: <line>` (sent only when the client takes side-band). */
  message: string;
};

/**
 * The body git-receive-pack would send after refusing every update: `unpack ok` (no object was
 * stored, and none is needed to refuse), an `ng <ref> <reason>` per update, a flush-pkt; inside
 * side-band channel 1 when the client asked for side-band (with `message` on channel 2 before it).
 * Null when the client asked for no report (neither report-status nor report-status-v2): the
 * caller answers with an HTTP error instead.
 */
export function refusalReport(capabilities: string[], updates: RefUpdate[], refusal: PushRefusal): Buffer | null {
  if (!capabilities.includes("report-status") && !capabilities.includes("report-status-v2")) return null;
  const lines = [pktLine("unpack ok\n")];
  for (const { refName } of updates) {
    const reason = refusal.reasons.get(refName) ?? "refused with the rest of this push";
    lines.push(pktLine(`ng ${refName} ${oneLine(reason)}\n`));
  }
  const report = Buffer.concat([...lines, FLUSH_PKT]);
  const band = capabilities.includes("side-band-64k") ? MAX_PKT_LEN - 5 : capabilities.includes("side-band") ? 1000 - 5 : 0;
  if (band === 0) return report;
  const out: Buffer[] = [];
  for (const line of refusal.message.split("\n").filter(Boolean)) out.push(...sideband(2, Buffer.from(`${oneLine(line)}\n`, "utf8"), band));
  out.push(...sideband(1, report, band), FLUSH_PKT);
  return Buffer.concat(out);
}

function sideband(channel: 1 | 2, data: Buffer, max: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += max) out.push(pktLine(Buffer.concat([Buffer.from([channel]), data.subarray(at, at + max)])));
  return out;
}

/** A reason travels on one pkt-line: no line breaks or other control characters, and not too long. */
function oneLine(text: string): string {
  let out = "";
  for (const char of text) out += hasControl(char) ? " " : char;
  return out.replace(/ {2,}/g, " ").trim().slice(0, 500);
}
