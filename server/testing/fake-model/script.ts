/** The script language now lives with the mock models (production code); re-exported for the fake. */
export * from "../../models/script";
