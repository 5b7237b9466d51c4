import type { Command, Option } from "commander";

/**
 * Shell completion generated from the commander tree: the same table `--help` and the parser use,
 * so a new command or option completes with no extra work. The scripts walk the words typed so
 * far down the tree, then offer the subcommands, the options, or an option's choices.
 */

export interface CompletionOption {
  flags: string[];
  description: string;
  takesValue: boolean;
  choices: string[];
}

export interface CompletionNode {
  /** "agent spawn"; "" for `yard` itself. */
  path: string;
  commands: Array<{ name: string; description: string }>;
  options: CompletionOption[];
}

/** Every command of the tree, parents first, with what may follow it. */
export function completionTable(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const help = cmd.createHelp();
    const options = [...help.visibleOptions(cmd), ...help.visibleGlobalOptions(cmd)];
    nodes.push({
      path: path.join(" "),
      commands: cmd.commands.map((c) => ({ name: c.name(), description: c.description() })),
      options: options.map(optionOf),
    });
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return nodes;
}

function optionOf(o: Option): CompletionOption {
  return { flags: [o.short, o.long].filter((f): f is string => !!f), description: o.description, takesValue: o.required || o.optional, choices: o.argChoices ?? [] };
}

/** A word in single quotes for sh. */
const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

function caseBlock(name: string, entries: Array<[pattern: string, body: string]>, otherwise: string): string {
  return `${name}() {\n  case "$1" in\n${entries.map(([p, b]) => `    ${p}) ${b} ;;`).join("\n")}\n    *) ${otherwise} ;;\n  esac\n}`;
}

/** `_yard_values PATH PREV`: succeeds when PREV is an option taking a value (printing its choices, if any). */
function valuesBlock(nodes: CompletionNode[], print: (words: string[]) => string): string {
  const entries: Array<[string, string]> = [];
  for (const n of nodes) {
    for (const o of n.options) {
      if (!o.takesValue) continue;
      const patterns = o.flags.map((f) => quote(`${n.path}|${f}`)).join("|");
      entries.push([patterns, o.choices.length > 0 ? print(o.choices) : "return 0"]);
    }
  }
  return `_yard_values() {\n  case "$1|$2" in\n${entries.map(([p, b]) => `    ${p}) ${b} ;;`).join("\n")}\n    *) return 1 ;;\n  esac\n}`;
}

export function bashCompletion(program: Command): string {
  const nodes = completionTable(program);
  const words = (list: string[]) => `echo ${quote(list.join(" "))}`;
  return `# bash completion for yard, generated from its command tree by \`yard completion bash\`.
# Load it now: eval "$(yard completion bash)"
# For good:    yard completion bash > ~/.local/share/bash-completion/completions/yard
${caseBlock(
  "_yard_commands",
  nodes.filter((n) => n.commands.length > 0).map((n) => [quote(n.path), words(n.commands.map((c) => c.name))]),
  ":",
)}
${caseBlock(
  "_yard_options",
  nodes.map((n) => [quote(n.path), words(n.options.flatMap((o) => o.flags))]),
  ":",
)}
${valuesBlock(nodes, words)}
_yard() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath="" word c i values
  (( COMP_CWORD > 1 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    for c in $(_yard_commands "$cmdpath"); do
      if [[ "$c" == "$word" ]]; then cmdpath="\${cmdpath:+$cmdpath }$word"; break; fi
    done
  done
  if values="$(_yard_values "$cmdpath" "$prev")"; then
    COMPREPLY=($(compgen -W "$values" -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_yard_options "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_yard_commands "$cmdpath")" -- "$cur"))
  fi
}
complete -o default -F _yard yard
`;
}

export function zshCompletion(program: Command): string {
  const nodes = completionTable(program);
  // _describe entries are "name:description" (a colon in the name escaped)
  const described = (items: Array<{ name: string; description: string }>) => `print -rl -- ${items.map((i) => quote(`${i.name.replace(/:/g, "\\:")}:${i.description}`)).join(" ")}`;
  return `#compdef yard
# zsh completion for yard, generated from its command tree by \`yard completion zsh\`.
# Load it now: source <(yard completion zsh)      (after compinit)
# For good:    yard completion zsh > "\${fpath[1]}/_yard"
${caseBlock(
  "_yard_commands",
  nodes.filter((n) => n.commands.length > 0).map((n) => [quote(n.path), described(n.commands)]),
  ":",
)}
${caseBlock(
  "_yard_options",
  nodes.map((n) => [quote(n.path), described(n.options.flatMap((o) => o.flags.map((f) => ({ name: f, description: o.description }))))]),
  ":",
)}
${valuesBlock(nodes, (list) => `print -rl -- ${list.map(quote).join(" ")}`)}
_yard() {
  local cmdpath="" word c i values
  local -a items
  for (( i = 2; i < CURRENT; i++ )); do
    word="\${words[i]}"
    for c in \${(f)"$(_yard_commands "$cmdpath")"}; do
      if [[ "\${c%%:*}" == "$word" ]]; then cmdpath="\${cmdpath:+$cmdpath }$word"; break; fi
    done
  done
  if values="$(_yard_values "$cmdpath" "\${words[CURRENT-1]}")"; then
    items=(\${(f)values})
    if (( \${#items} )); then compadd -a items; else _files; fi
  elif [[ "\${words[CURRENT]}" == -* ]]; then
    items=(\${(f)"$(_yard_options "$cmdpath")"})
    _describe -t options option items
  else
    items=(\${(f)"$(_yard_commands "$cmdpath")"})
    if (( \${#items} )); then _describe -t commands command items; else _files; fi
  fi
}
if [[ "\${funcstack[1]}" == "_yard" ]]; then _yard "$@"; else compdef _yard yard; fi
`;
}
