import { findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node as JsonNode, type ParseError } from "jsonc-parser";
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import type { SourceFormat } from "../../shared/strategy";
import type { PathSegment } from "./validate";

/**
 * Parses strategy text (JSON, JSONC, YAML) into a JS value plus a locator that maps a path
 * (`["agents", "a", "colour"]`) to the line and column of that node in the text, so issues point
 * at the file: for a key, the key itself; for a missing key, the nearest enclosing node.
 */

export type Position = { line: number; column: number };
export type Locator = (path: PathSegment[]) => Position | undefined;
export type SyntaxIssue = { message: string; line?: number; column?: number };
export type ParsedSource = { ok: true; value: unknown; locate: Locator } | { ok: false; issues: SyntaxIssue[] };

const MAX_YAML_ERRORS = 10;

export function parseSource(text: string, format: SourceFormat): ParsedSource {
  return format === "yaml" ? parseYaml(text) : parseJson(text, format);
}

function parseYaml(text: string): ParsedSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const at = (offset: number | undefined): Position | undefined => {
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    const issues = doc.errors.slice(0, MAX_YAML_ERRORS).map((e) => ({ message: `YAML syntax error: ${e.message}`, ...at(e.pos[0]) }));
    return { ok: false, issues };
  }
  try {
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    return { ok: true, value, locate: (path) => at(yamlOffset(doc, path)) };
  } catch (err) {
    return { ok: false, issues: [{ message: `YAML error: ${err instanceof Error ? err.message : String(err)}` }] };
  }
}

/** The offset of the deepest node along `path` that exists (a key's own position for a key). */
function yamlOffset(doc: Document, path: PathSegment[]): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (const seg of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(seg));
      if (!pair) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === "number") {
      node = node.items[seg];
      if (node === undefined) break;
      offset = rangeStart(node) ?? offset;
    } else break;
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range?.[0];
}

function parseJson(text: string, format: "json" | "jsonc"): ParsedSource {
  const at = offsetToPosition(text);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: format === "jsonc", disallowComments: format === "json" });
  const first = errors[0];
  if (first || !tree) {
    let message = first ? `JSON syntax error: ${words(printParseErrorCode(first.error))}` : "JSON syntax error: the file is empty";
    if (first && format === "json" && isValidJsonc(text)) message += " (comments and trailing commas need a .jsonc file)";
    return { ok: false, issues: [{ message, ...(first ? at(first.offset) : {}) }] };
  }
  const duplicate = findDuplicateKey(tree);
  if (duplicate) return { ok: false, issues: [{ message: `duplicate key ${JSON.stringify(duplicate.key)}`, ...at(duplicate.offset) }] };
  const locate: Locator = (path) => {
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? tree : findNodeAtLocation(tree, path.slice(0, n));
      if (!node) continue;
      const keyed = node.parent?.type === "property" ? node.parent : node;
      return at(keyed.offset);
    }
    return undefined;
  };
  return { ok: true, value: getNodeValue(tree) as unknown, locate };
}

function isValidJsonc(text: string): boolean {
  const errors: ParseError[] = [];
  parseTree(text, errors, { allowTrailingComma: true });
  return errors.length === 0;
}

/** JSON allows `{"a":1,"a":2}` and keeps the last; a strategy file should not. */
function findDuplicateKey(node: JsonNode): { key: string; offset: number } | undefined {
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const property of node.children ?? []) {
      const key = property.children?.[0];
      if (!key || typeof key.value !== "string") continue;
      if (seen.has(key.value)) return { key: key.value, offset: key.offset };
      seen.add(key.value);
    }
  }
  for (const child of node.children ?? []) {
    const found = findDuplicateKey(child);
    if (found) return found;
  }
  return undefined;
}

/** "CommaExpected" -> "comma expected". */
function words(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

/** Maps a character offset to a 1-based line and column. */
export function offsetToPosition(text: string): (offset: number) => Position {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (starts[lo] ?? 0) + 1 };
  };
}
