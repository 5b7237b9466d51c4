// @vitest-environment happy-dom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useThrottled } from "./useThrottled";

Object.assign(globalThis, { IS_REACT_ACT_ENVIRONMENT: true });

let root: Root;
let rendered: string[];

function Probe({ value, active }: { value: string; active: boolean }) {
  const shown = useThrottled(value, 100, active);
  rendered.push(shown);
  return <p>{shown}</p>;
}

const render = (value: string, active: boolean) => act(() => root.render(<Probe value={value} active={active} />));
/** The distinct values shown, in order (a render that shows the same value again is free). */
const shownValues = () => rendered.filter((v, i) => v !== rendered[i - 1]);

beforeEach(() => {
  vi.useFakeTimers();
  rendered = [];
  root = createRoot(document.createElement("div"));
});

afterEach(() => {
  act(() => root.unmount());
  vi.useRealTimers();
});

describe("useThrottled", () => {
  it("while active: 200 changes over 2 s show at most ~10 values a second, and the last one always", async () => {
    render("", true);
    let text = "";
    for (let i = 0; i < 200; i++) {
      text += `t${i} `;
      render(text, true);
      await act(() => vi.advanceTimersByTimeAsync(10));
    }
    const during = shownValues().length;
    expect(during).toBeGreaterThanOrEqual(15);
    expect(during).toBeLessThanOrEqual(22);
    await act(() => vi.advanceTimersByTimeAsync(100));
    expect(rendered.at(-1)).toBe(text);
  });

  it("a change after a quiet spell shows at once; a burst shows its last value at the end of the window", async () => {
    render("a", true);
    await act(() => vi.advanceTimersByTimeAsync(500));
    render("ab", true);
    expect(rendered.at(-1)).toBe("ab");
    render("abc", true);
    render("abcd", true);
    expect(rendered.at(-1)).toBe("ab");
    await act(() => vi.advanceTimersByTimeAsync(100));
    expect(rendered.at(-1)).toBe("abcd");
    expect(shownValues()).toEqual(["a", "ab", "abcd"]);
  });

  it("not active: every value at once; when streaming stops, the final text shows without waiting", async () => {
    render("x", false);
    render("xy", false);
    expect(shownValues()).toEqual(["x", "xy"]);
    render("xy1", true);
    render("xy12", true);
    expect(rendered.at(-1)).toBe("xy1");
    render("xy12 final", false);
    expect(rendered.at(-1)).toBe("xy12 final");
  });

  it("starting to stream again does not show a value from before", async () => {
    render("one", true);
    await act(() => vi.advanceTimersByTimeAsync(200));
    render("one two", false);
    render("one two three", true);
    expect(rendered.at(-1)).toBe("one two three");
  });
});

describe("useThrottled with an expensive value", () => {
  it("stretches the window to 4x what the last change took to render: a 50 ms render is shown at most every 200 ms", async () => {
    function Slow({ value }: { value: string }) {
      const shown = useThrottled(value, 100, true);
      rendered.push(shown);
      vi.setSystemTime(Date.now() + 50); // this render costs 50 ms
      return <p>{shown}</p>;
    }
    const renderSlow = (value: string) => act(() => root.render(<Slow value={value} />));
    const start = Date.now();
    renderSlow("");
    let text = "";
    for (let i = 0; i < 100; i++) {
      text += `t${i} `;
      renderSlow(text);
      await act(() => vi.advanceTimersByTimeAsync(10));
    }
    // each render also moves the clock by 50 ms: the 100 changes span about 6 s, shown about every 200 ms
    const span = Date.now() - start;
    expect(span).toBeGreaterThan(5000);
    expect(shownValues().length).toBeLessThanOrEqual(Math.ceil(span / 200) + 2);
    await act(() => vi.advanceTimersByTimeAsync(300));
    expect(rendered.at(-1)).toBe(text);
  });
});
