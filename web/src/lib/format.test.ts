import { describe, expect, it } from "vitest";
import { plural } from "./format";

describe("plural", () => {
  it("one file, two files, no commits", () => {
    expect(plural(1, "file")).toBe("1 file");
    expect(plural(2, "file")).toBe("2 files");
    expect(plural(0, "commit")).toBe("0 commits");
    expect(plural(1, "new commit")).toBe("1 new commit");
    expect(plural(3, "entry", "entries")).toBe("3 entries");
  });
});
