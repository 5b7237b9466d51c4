/**
 * Commands run_command refuses outright, whatever the policy or a human says: the catastrophic,
 * irreversible ones (wiping the root or home directory, formatting or overwriting a disk, running
 * a script straight from the network, fork bombs, powering the machine off).
 *
 * This is not a sandbox. A command can reach the same end in ways no list of patterns foresees
 * (a script file, an alias, base64). It stops accidents and obvious mistakes; for a server others
 * can reach, set SWITCHYARD_RUN_COMMAND=ask so a human approves every command.
 */

/** Where a command word can stand: the start, after a separator or a pipe, in $( ), after sudo. */
const AT_COMMAND = String.raw`(?:^|[;&|(\x60\n]|\$\()\s*(?:sudo\s+(?:-\S+\s+)*)?(?:command\s+|exec\s+|env\s+)?`;
/** The root, the home directory, or everything directly in them. */
const ROOT_OR_HOME = String.raw`(?:\/|\/\*|~\/?\*?|"?\$\{?HOME\}?"?\/?\*?)`;
const END = String.raw`(?=\s|$|[;&|)\x60])`;

const rule = (label: string, source: string, flags = "") => ({ label, pattern: new RegExp(source, flags) });

export const COMMAND_DENY_LIST: ReadonlyArray<{ label: string; pattern: RegExp }> = [
  rule("removes the root or home directory", String.raw`${AT_COMMAND}rm\s+(?:-{1,2}[\w-]+\s+)*${ROOT_OR_HOME}${END}`),
  rule("removes without the root guard", String.raw`\brm\b[^;&|]*--no-preserve-root`),
  rule("formats a file system", String.raw`${AT_COMMAND}(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs)${END}`),
  rule("writes a raw device with dd", String.raw`${AT_COMMAND}dd\b[^;&|]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)`),
  rule("redirects into a disk device", String.raw`>\s*\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md)\w*`),
  rule("is a fork bomb", String.raw`([\w:]+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}\s*;\s*\1`),
  rule("pipes a download into an interpreter", String.raw`\b(?:curl|wget|fetch)\b[^;&]*\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python\d*(?:\.\d+)?|perl|ruby|node)\b`),
  rule("runs a download as a script", String.raw`\b(?:(?:ba|z|da|k)?sh|python\d*|perl|ruby|node)\b[^;&|]*(?:<\(|\$\(|\x60)\s*(?:curl|wget)\b`),
  rule("powers the machine off or reboots it", String.raw`${AT_COMMAND}(?:shutdown|reboot|halt|poweroff|(?:tel)?init\s+[06]|systemctl\s+(?:poweroff|reboot|halt|kexec))${END}`),
  rule("changes owner or mode of the whole root", String.raw`${AT_COMMAND}(?:chmod|chown|chgrp)(?=[^;&|]*\s(?:-[a-zA-Z]*R|--recursive))\s+(?:\S+\s+)*?${ROOT_OR_HOME}${END}`),
];

/** Why the deny-list refuses this command line, or undefined when it does not. */
export function deniedCommand(command: string): string | undefined {
  return COMMAND_DENY_LIST.find((r) => r.pattern.test(command))?.label;
}
