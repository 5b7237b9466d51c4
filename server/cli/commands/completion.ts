import { Argument, type Command } from "commander";
import { bashCompletion, zshCompletion } from "../completion";
import { examples, local, type Cli } from "./common";

export function registerCompletion(program: Command, cli: Cli): void {
  const cmd = local(program.command("completion"))
    .description("print a shell completion script for bash or zsh (made from the command tree)")
    .addArgument(new Argument("<shell>", "bash or zsh").choices(["bash", "zsh"]))
    .action((shell: "bash" | "zsh") => {
      cli.io.stdout.write(shell === "bash" ? bashCompletion(program) : zshCompletion(program));
    });
  examples(cmd, 'eval "$(yard completion bash)"', "yard completion bash > ~/.local/share/bash-completion/completions/yard", 'yard completion zsh > "${fpath[1]}/_yard"');
}
