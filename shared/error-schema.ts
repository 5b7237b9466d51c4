import { z } from "zod";
import { ALL_ERROR_CODES, type ErrorCode as Code } from "./errors";

/** Every stable code Switchyard answers with, as a schema (errors.ts holds the lists, zod-free). */
export const ErrorCode = z.enum(ALL_ERROR_CODES as [Code, ...Code[]]);
export type ErrorCode = Code;
