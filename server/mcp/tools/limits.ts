import { z } from "zod";

/**
 * Argument bounds shared by the tools: a model that sends a huge or empty value gets a tool error
 * naming the field, before anything reaches a procedure.
 */

export const MAX_TEXT_CHARS = 100_000;

/** An id or alias of a run, agent, request, conversation or daemon. */
export const ID = z.string().min(1).max(200);
export const PATH = z.string().min(1).max(4096);
export const SHORT_TEXT = z.string().min(1).max(500);
export const LONG_TEXT = z.string().max(MAX_TEXT_CHARS);
export const MESSAGE = z.string().min(1).max(MAX_TEXT_CHARS);
/** A line, character or item offset (bounded, so its JSON Schema says so plainly). */
export const OFFSET = z.number().int().min(0).max(1_000_000_000);
