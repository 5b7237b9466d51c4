/**
 * pkt-line, git's framing (gitprotocol-common(5)): four hex digits giving the length of the line
 * including themselves, then the payload; "0000" is a flush-pkt. Only what the push path needs.
 */

export const FLUSH_PKT = Buffer.from("0000", "ascii");
/** The longest pkt-line git accepts: 65520 bytes, its four length digits included. */
export const MAX_PKT_LEN = 65520;

export class PktLineError extends Error {}

/** One pkt-line holding `payload` (a string is written as UTF-8). */
export function pktLine(payload: string | Buffer): Buffer {
  const data = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  if (data.length + 4 > MAX_PKT_LEN) throw new PktLineError(`pkt-line payload of ${data.length} bytes is too long`);
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, "0"), "ascii"), data]);
}

/**
 * Reads pkt-lines from the front of a byte stream, chunk by chunk, keeping every byte it was given
 * (`consumed`) so the caller can replay the stream from its start afterwards.
 */
export class PktReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Offset of the next unread pkt-line within the concatenation of `chunks`. */
  private offset = 0;
  private flat: Buffer = Buffer.alloc(0);

  /** Add the next chunk of the stream. */
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.flat = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks, this.buffered);
  }

  /** Every byte pushed so far, in order. */
  get consumed(): Buffer {
    return this.flat;
  }

  /**
   * The next pkt-line: its payload, `"flush"` for a flush-pkt, or null when more bytes are needed.
   * Throws PktLineError on a malformed length.
   */
  next(): Buffer | "flush" | null {
    if (this.buffered - this.offset < 4) return null;
    const head = this.flat.toString("ascii", this.offset, this.offset + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(head)) throw new PktLineError(`bad pkt-line length ${JSON.stringify(head)}`);
    const len = parseInt(head, 16);
    if (len === 0) {
      this.offset += 4;
      return "flush";
    }
    if (len < 4) throw new PktLineError(`unexpected special pkt-line ${head} in a push`);
    if (this.buffered - this.offset < len) return null;
    const payload = this.flat.subarray(this.offset + 4, this.offset + len);
    this.offset += len;
    return payload;
  }
}
