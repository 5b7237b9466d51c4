/**
 * Top-level pieces of a Markdown text, split at blank lines outside code fences, so that the
 * <Markdown> component can memoize each piece: while an agent streams, only the last piece is
 * parsed again. A blank line followed by an indented line does not split (the item or code block
 * goes on); a split between two items of one list makes two lists, which look the same (an ordered
 * list keeps its numbering through `start`). A link reference definition reaches only its own piece.
 */
export function splitChunks(text: string): string[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const indentedNext = continuations(lines);
  const chunks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  lines.forEach((line, i) => {
    fence = fenceAfter(line, fence);
    if (fence === null && line.trim() === "" && !indentedNext[i]) {
      if (current.length) chunks.push(current.join("\n"));
      current = [];
      return;
    }
    current.push(line);
  });
  if (current.length) chunks.push(current.join("\n"));
  return chunks;
}

/** For each line: is the next non-blank line indented (a continuation of what came before)? */
function continuations(lines: string[]): boolean[] {
  const out = new Array<boolean>(lines.length).fill(false);
  let next = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    out[i] = next;
    const line = lines[i]!;
    if (line.trim() !== "") next = /^\s/.test(line);
  }
  return out;
}

/** The open fence after `line`: a fence opens with ``` or ~~~ (and an info string), closes with a bare run as long. */
function fenceAfter(line: string, fence: string | null): string | null {
  if (fence === null) return /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1] ?? null;
  const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)?.[1];
  return close && close[0] === fence[0] && close.length >= fence.length ? null : fence;
}
