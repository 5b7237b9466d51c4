// @vitest-environment happy-dom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Markdown, safeUrl } from "./Markdown";

Object.assign(globalThis, { IS_REACT_ACT_ENVIRONMENT: true });

let container: HTMLElement;
let root: Root;

beforeEach(() => {
  container = document.createElement("div");
  root = createRoot(container);
});
afterEach(() => act(() => root.unmount()));

const render = (text: string, streaming = false) => act(() => root.render(<Markdown text={text} streaming={streaming} />));
const hrefs = () => [...container.querySelectorAll("[href], [src]")].map((el) => el.getAttribute("href") ?? el.getAttribute("src"));

describe("Markdown: raw HTML and links are not trusted", () => {
  it("<script> and other raw HTML show as text, never as elements", () => {
    render('Hello <script>alert("x")</script> and <img src=x onerror="alert(1)">\n\n<script>\nalert(2)\n</script>\n\n<iframe src="https://evil.example"></iframe>');
    expect(container.querySelector("script, img, iframe, [onerror]")).toBeNull();
    expect(container.textContent).toContain('<script>alert("x")</script>');
    expect(container.textContent).toContain("<iframe");
  });

  it("javascript:, data: and relative links do not pass: no href, the label stays as text", () => {
    render(
      [
        "[r]: javascript:alert(1)",
        "[click](javascript:alert(1))",
        "[upper](JavaScript:alert(1))",
        "[encoded](java&#x73;cript:alert(1))",
        "<javascript:alert(1)>",
        "[data](data:text/html;base64,PHNjcmlwdD4=)",
        "[ref][r]",
        "![pic](javascript:alert(1))",
        "[rel](../etc/passwd)",
      ].join("\n"),
    );
    expect(hrefs()).toEqual([]);
    const attributes = [...container.querySelectorAll("*")].flatMap((el) => [...el.attributes].map((a) => a.value.toLowerCase()));
    expect(attributes.filter((value) => value.includes("javascript:") || value.includes("data:"))).toEqual([]);
    expect(container.textContent).toContain("click");
    expect(container.textContent).toContain("ref");
  });

  it("web and mail links open in a new tab without an opener; images are links, never loaded", () => {
    render("[docs](https://example.com/a), https://x.dev/b, <mailto:a@b.c> and ![chart](https://example.com/c.png)");
    const links = [...container.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.com/a", "https://x.dev/b", "mailto:a@b.c", "https://example.com/c.png"]);
    for (const a of links) {
      expect(a.getAttribute("target")).toBe("_blank");
      expect(a.getAttribute("rel")).toContain("noopener");
    }
    expect(container.querySelector("img")).toBeNull();
    expect(links[3]!.textContent).toBe("chart");
  });

  it("safeUrl keeps http(s) and mailto only", () => {
    expect(safeUrl(" https://a.b/c ")).toBe("https://a.b/c");
    expect(safeUrl("MAILTO:x@y.z")).toBe("MAILTO:x@y.z");
    for (const bad of ["javascript:alert(1)", "vbscript:x", "data:text/html,x", "/relative", "#top", "file:///etc/passwd"]) expect(safeUrl(bad)).toBeUndefined();
  });
});

describe("Markdown: GitHub-flavoured rendering", () => {
  it("renders tables (with alignment), strikethrough, task lists, headings, code and line breaks", () => {
    render(
      "## Plan\n\n| Step | Cost |\n|:-----|-----:|\n| one | 1 |\n| two | 22 |\n\n~~old~~ new\n\n- [x] done\n- [ ] todo\n\n```ts\nconst a = 1;\n```\n\nline one\nline two and `inline`",
    );
    expect(container.querySelector("h2")?.textContent).toBe("Plan");
    const table = container.querySelector("table")!;
    expect([...table.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["Step", "Cost"]);
    expect([...table.querySelectorAll("tbody tr")].map((tr) => tr.textContent)).toEqual(["one1", "two22"]);
    expect(table.querySelectorAll("td")[1]!.getAttribute("style")).toContain("right");
    expect(container.querySelector("del")?.textContent).toBe("old");
    const boxes = [...container.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')];
    expect(boxes.map((b) => b.checked)).toEqual([true, false]);
    expect(boxes.every((b) => b.disabled)).toBe(true);
    expect(container.querySelector("pre code")?.textContent).toBe("const a = 1;\n");
    expect(container.querySelector("pre code")?.getAttribute("data-lang")).toBe("ts");
    expect(container.querySelector("p code")?.textContent).toBe("inline");
    expect(container.querySelector("p br")).not.toBeNull();
  });

  it("an ordered list split by a blank line keeps its numbering", () => {
    render("1. first\n\n2. second");
    expect([...container.querySelectorAll("ol")].map((ol) => ol.getAttribute("start") ?? "1")).toEqual(["1", "2"]);
  });
});

describe("Markdown while streaming", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("re-renders at most ~10 times a second while the text streams, and renders the final text", async () => {
    render("", true);
    let text = "";
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      text += `**w${i}** `;
      render(text, true);
      seen.add(container.textContent ?? "");
      await act(() => vi.advanceTimersByTimeAsync(10));
      seen.add(container.textContent ?? "");
    }
    // 1 s of deltas every 10 ms: about ten renders, not a hundred
    expect(seen.size).toBeLessThanOrEqual(13);
    render(text, false);
    expect(container.querySelectorAll("strong")).toHaveLength(100);
    expect(container.textContent).toContain("w99");
  });
});
