export * from "./api";
export * from "./errors";
export * from "./events";
export * from "./statuses";
export * from "./strategy";
export * from "./runs";
export * from "./comma";
export * from "./agents";
