import { z } from "zod";
import { guardedTool } from "./guard";
import type { ToolContext } from "./tool-context";

/** ask_question: the agent asks the human (request_question) and gets the answer as the tool output. */
export function askQuestionTools(ctx: ToolContext) {
  return {
    ask_question: guardedTool(ctx, "ask_question", {
      description: "Ask the user a question and wait for the answer. Use it when you need a decision or information only the user has.",
      inputSchema: z.object({ question: z.string().min(1).describe("The question, self-contained") }),
      access: () => [],
      run: async (input) => {
        const answer = await ctx.askQuestion({ toolName: "ask_question", question: input.question });
        return answer.trim() === "" ? "(the user gave an empty answer)" : answer;
      },
    }),
  };
}
