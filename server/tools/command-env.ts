/**
 * The environment a run_command command gets: the server's, without anything that can be a
 * secret. Left out: every SWITCHYARD_* variable (the server token among them), every name with a
 * secret-like part (API_KEY, TOKEN, SECRET, PASSWORD, CREDENTIALS, AUTH, KEY, SESSION, COOKIE...:
 * ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK...), any value holding
 * credentials in a URL (`https://user:pass@host`), and any value holding a secret the server knows
 * (`isSecret`: the configured keys and token, account credentials). The call's own `env` is added
 * last: the model chose those values.
 */

const SECRET_PART = /(?:^|_)(?:API_?KEYS?|ACCESS_?KEYS?|KEYS?|SECRETS?|TOKENS?|PASSWORD|PASSWD|PASS|PASSPHRASE|PWD_?HASH|CREDENTIALS?|CREDS?|AUTH|AUTHORIZATION|COOKIES?|SESSION|PRIVATE|SIGNING)(?:_|$)/i;
const SERVER_OWN = /^SWITCHYARD_/i;
const URL_CREDENTIALS = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@/i;

/** True for a variable that must not reach a command. */
export function isSecretVariable(name: string, value: string, isSecret?: (value: string) => boolean): boolean {
  if (SERVER_OWN.test(name) || SECRET_PART.test(name)) return true;
  if (URL_CREDENTIALS.test(value)) return true;
  return value.length >= 4 && (isSecret?.(value) ?? false);
}

export function commandEnv(base: NodeJS.ProcessEnv, extra: Record<string, string> | undefined, isSecret?: (value: string) => boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || isSecretVariable(name, value, isSecret)) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}
