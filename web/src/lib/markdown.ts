/**
 * A small, safe Markdown parser for agent output: headings, paragraphs, lists (nested), block
 * quotes, fenced code, rules; inline code, bold, italic, links. It returns a tree that the
 * <Markdown> component renders as React elements: raw HTML is never interpreted (it shows as
 * text), and links keep only http(s) and mailto targets. Made for streaming: an unclosed fence
 * is a code block up to the end, an unclosed `**` is plain text until it closes.
 */

export type Inline =
  | { t: "text"; text: string }
  | { t: "code"; text: string }
  | { t: "strong"; children: Inline[] }
  | { t: "em"; children: Inline[] }
  | { t: "link"; href: string; children: Inline[] }
  | { t: "br" };

export type Block =
  | { t: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; text: string }
  | { t: "paragraph"; text: string }
  | { t: "code"; lang: string; text: string; open: boolean }
  | { t: "list"; ordered: boolean; start: number; items: Block[][]; tight: boolean }
  | { t: "quote"; children: Block[] }
  | { t: "hr" };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>[ ]?(.*)$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+(.*))?$/;

const isBlank = (line: string) => line.trim() === "";

/** Does this line start a block other than a paragraph (so it ends a paragraph)? */
function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || ITEM.test(line);
}

export function parseBlocks(text: string): Block[] {
  return parseLines(text.replace(/\r\n?/g, "\n").split("\n"));
}

function parseLines(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      i = parseFence(lines, i, fence[1]!, fence[2] ?? "", blocks);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ t: "heading", level: heading[1]!.length as 1 | 2 | 3 | 4 | 5 | 6, text: heading[2] ?? "" });
      i++;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ t: "hr" });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      for (; i < lines.length && QUOTE.test(lines[i]!); i++) inner.push(QUOTE.exec(lines[i]!)![1]!);
      blocks.push({ t: "quote", children: parseLines(inner) });
      continue;
    }
    if (ITEM.test(line)) {
      i = parseList(lines, i, blocks);
      continue;
    }
    const para: string[] = [];
    for (; i < lines.length && !isBlank(lines[i]!) && (para.length === 0 || !startsBlock(lines[i]!)); i++) para.push(lines[i]!.trim());
    blocks.push({ t: "paragraph", text: para.join("\n") });
  }
  return blocks;
}

function parseFence(lines: string[], start: number, marker: string, lang: string, out: Block[]): number {
  const body: string[] = [];
  const close = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
  let i = start + 1;
  for (; i < lines.length; i++) {
    if (close.test(lines[i]!)) {
      out.push({ t: "code", lang, text: body.join("\n"), open: false });
      return i + 1;
    }
    body.push(lines[i]!);
  }
  out.push({ t: "code", lang, text: body.join("\n"), open: true });
  return i;
}

/** A list: items of the same kind; an item's following lines belong to it while indented. */
function parseList(lines: string[], start: number, out: Block[]): number {
  const first = ITEM.exec(lines[start]!)!;
  const ordered = /\d/.test(first[2]!);
  const items: string[][] = [];
  let tight = true;
  let i = start;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]!);
    if (!m || /\d/.test(m[2]!) !== ordered) break;
    const indent = m[1]!.length + m[2]!.length + 1;
    const item = [m[4] ?? ""];
    i++;
    while (i < lines.length) {
      const line = lines[i]!;
      if (isBlank(line)) {
        const next = lines[i + 1];
        if (next === undefined || (!/^\s/.test(next) && !ITEM.test(next))) break;
        if (ITEM.test(next) && leadingSpaces(next) < indent) tight = false;
        item.push("");
        i++;
        continue;
      }
      if (leadingSpaces(line) >= Math.min(indent, 4)) item.push(line.slice(Math.min(indent, leadingSpaces(line))));
      else if (!startsBlock(line) && !isBlank(item.at(-1) ?? "")) item.push(line.trim()); // lazy continuation
      else break;
      i++;
    }
    while (item.length > 1 && isBlank(item.at(-1)!)) item.pop();
    items.push(item);
  }
  out.push({ t: "list", ordered, start: ordered ? Number.parseInt(first[2]!, 10) : 1, items: items.map(parseLines), tight });
  return i;
}

function leadingSpaces(line: string): number {
  return /^ */.exec(line)![0].length;
}

/** Top-level pieces of the text, split at blank lines that are not inside a fence. */
export function splitChunks(text: string): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) fence = fence === null ? marker : null;
    if (fence === null && line.trim() === "" && !/^\s/.test(current.at(-1) ?? "")) {
      if (current.length) chunks.push(current.join("\n"));
      current = [];
      continue;
    }
    current.push(line);
  }
  if (current.length) chunks.push(current.join("\n"));
  return chunks;
}

// ---------------------------------------------------------------------------------------------
// Inline.

const PUNCT = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const URL_START = /^https?:\/\/[^\s<]+/;

/** Only web and mail links; anything else (javascript:, data:, relative) is not a link. */
export function safeHref(href: string): string | undefined {
  const h = href.trim();
  return /^(https?:\/\/|mailto:)/i.test(h) ? h : undefined;
}

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push({ t: "text", text: buf });
    buf = "";
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "\\" && i + 1 < text.length && PUNCT.test(text[i + 1]!)) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "\n") {
      flush();
      out.push({ t: "br" });
      i++;
      continue;
    }
    const span = matchSpan(text, i);
    if (span) {
      flush();
      out.push(span.node);
      i = span.end;
      continue;
    }
    buf += ch;
    i++;
  }
  flush();
  return out;
}

type Span = { node: Inline; end: number };

function matchSpan(text: string, i: number): Span | undefined {
  const ch = text[i]!;
  if (ch === "`") return codeSpan(text, i);
  if (ch === "*" || ch === "_") return emphasis(text, i, ch);
  if (ch === "[") return link(text, i);
  if (ch === "<") return autolink(text, i);
  if (ch === "h" && (i === 0 || !/\w/.test(text[i - 1]!))) return bareUrl(text, i);
  return undefined;
}

function codeSpan(text: string, i: number): Span | undefined {
  const run = /^`+/.exec(text.slice(i))![0];
  const close = text.indexOf(run, i + run.length);
  if (close < 0) return undefined;
  const inner = text.slice(i + run.length, close);
  const trimmed = inner.length > 2 && inner.startsWith(" ") && inner.endsWith(" ") ? inner.slice(1, -1) : inner;
  return { node: { t: "code", text: trimmed.replace(/\n/g, " ") }, end: close + run.length };
}

function emphasis(text: string, i: number, ch: "*" | "_"): Span | undefined {
  const double = text[i + 1] === ch;
  const marker = double ? ch + ch : ch;
  const after = text[i + marker.length];
  if (after === undefined || /\s/.test(after)) return undefined;
  if (ch === "_" && i > 0 && /\w/.test(text[i - 1]!)) return undefined;
  for (let j = i + marker.length + 1; j <= text.length - marker.length; j++) {
    if (text.startsWith(marker, j) && !/\s/.test(text[j - 1]!) && text[j - 1] !== "\\") {
      if (!double && text[j + 1] === ch) {
        j++; // part of a `**` inside an `*...*`: skip it
        continue;
      }
      if (ch === "_" && j + marker.length < text.length && /\w/.test(text[j + marker.length]!)) continue;
      const children = parseInline(text.slice(i + marker.length, j));
      return { node: double ? { t: "strong", children } : { t: "em", children }, end: j + marker.length };
    }
    if (text[j] === "`") {
      const code = codeSpan(text, j);
      if (code) j = code.end - 1;
    }
  }
  return undefined;
}

function link(text: string, i: number): Span | undefined {
  let depth = 0;
  let close = -1;
  for (let j = i; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === "[") depth++;
    else if (text[j] === "]" && --depth === 0) {
      close = j;
      break;
    }
  }
  if (close < 0 || text[close + 1] !== "(") return undefined;
  const end = text.indexOf(")", close + 2);
  if (end < 0) return undefined;
  const target = text.slice(close + 2, end).trim().split(/\s+/)[0] ?? "";
  const label = parseInline(text.slice(i + 1, close));
  const href = safeHref(target.replace(/^<|>$/g, ""));
  if (!href) return { node: { t: "text", text: text.slice(i + 1, close) }, end: end + 1 };
  return { node: { t: "link", href, children: label }, end: end + 1 };
}

function autolink(text: string, i: number): Span | undefined {
  const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
  if (!m) return undefined;
  return { node: { t: "link", href: m[1]!, children: [{ t: "text", text: m[1]! }] }, end: i + m[0].length };
}

function bareUrl(text: string, i: number): Span | undefined {
  const m = URL_START.exec(text.slice(i));
  if (!m) return undefined;
  const url = m[0].replace(/[.,;:!?*_)\]'"]+$/, "");
  if (url.length <= "https://".length) return undefined;
  return { node: { t: "link", href: url, children: [{ t: "text", text: url }] }, end: i + url.length };
}
