import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";

/** The three smart-HTTP endpoints, as `git http-backend` names them in PATH_INFO. */
export type BackendPath = "/info/refs" | "/git-upload-pack" | "/git-receive-pack";

export type BackendRequest = {
  /** The repository's root (a work tree with .git, or a bare repository): GIT_PROJECT_ROOT. */
  repoPath: string;
  path: BackendPath;
  method: "GET" | "POST";
  query: string;
  contentType?: string;
  /** Only when the body handed to http-backend is exactly the request's (same bytes). */
  contentLength?: string;
  /** The body handed to http-backend is gzip-compressed: it inflates it. */
  gzip?: boolean;
  /** The client's Git-Protocol header (`version=2`), already checked. */
  gitProtocol?: string;
  remoteAddr: string;
  /** Enable receive-pack for this one call (the repository's own config is left alone). */
  receivePack: boolean;
};

/**
 * The variables a git child may inherit from the server: enough to find programs and the user's
 * git config, nothing else (the server's tokens and API keys never reach a repository's hooks,
 * and no GIT_* variable of the server's can redirect the call to another repository).
 */
const INHERITED = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "XDG_CONFIG_HOME", "SYSTEMROOT"];

/** The CGI environment of one `git http-backend` call. */
export function backendEnv(r: BackendRequest, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED) if (base[name] !== undefined) env[name] = base[name];
  // command-line-level config for this call only: it wins over the repository's own
  const config: [string, string][] = [
    ["http.receivepack", r.receivePack ? "true" : "false"],
    ["http.uploadpack", "true"],
    ["http.getanyfile", "false"],
  ];
  Object.assign(env, {
    GIT_PROJECT_ROOT: r.repoPath,
    PATH_INFO: r.path,
    REQUEST_METHOD: r.method,
    QUERY_STRING: r.query,
    GIT_HTTP_EXPORT_ALL: "1",
    REMOTE_USER: "switchyard",
    REMOTE_ADDR: r.remoteAddr,
    GIT_CONFIG_COUNT: String(config.length),
  });
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  if (r.contentType !== undefined) env.CONTENT_TYPE = r.contentType;
  if (r.contentLength !== undefined) env.CONTENT_LENGTH = r.contentLength;
  if (r.gzip) env.HTTP_CONTENT_ENCODING = "gzip";
  if (r.gitProtocol !== undefined) env.GIT_PROTOCOL = r.gitProtocol;
  return env;
}

export type Backend = ChildProcessByStdio<Writable, Readable, Readable>;

/** Start `git http-backend` for one request; its stdin is the request body, its stdout the CGI response. */
export function spawnBackend(r: BackendRequest): Backend {
  return spawn("git", ["http-backend"], { env: backendEnv(r), cwd: r.repoPath, stdio: ["pipe", "pipe", "pipe"] });
}

export class CgiError extends Error {}

export type CgiHead = { status: number; headers: Record<string, string>; body: Readable };

/** The CGI header block may not be longer than this. */
const MAX_HEAD = 64 * 1024;

/**
 * Read the CGI header block (`Status: 404 Not Found`, `Content-Type: ...`, a blank line) from the
 * front of `stdout`; resolves with the status, the other headers, and `stdout` itself as the body,
 * positioned just after the blank line and not read any further (the caller streams it).
 */
export function readCgiHead(stdout: Readable): Promise<CgiHead> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const done = (err: Error | null, result?: CgiHead) => {
      stdout.off("readable", onReadable).off("end", onEnd).off("error", onError);
      if (err) reject(err);
      else resolve(result!);
    };
    const onEnd = () => done(new CgiError("git http-backend ended before its headers"));
    const onError = (err: Error) => done(err);
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = stdout.read() as Buffer | null) !== null) {
        head = Buffer.concat([head, chunk]);
        const end = headEnd(head);
        if (end) {
          const rest = head.subarray(end.body);
          let parsed: ReturnType<typeof parseHead>;
          try {
            parsed = parseHead(head.toString("latin1", 0, end.head));
          } catch (err) {
            return done(err as Error);
          }
          if (rest.length > 0) stdout.unshift(rest);
          return done(null, { ...parsed, body: stdout });
        }
        if (head.length > MAX_HEAD) return done(new CgiError(`git http-backend sent more than ${MAX_HEAD} bytes of headers`));
      }
    };
    stdout.on("readable", onReadable).on("end", onEnd).on("error", onError);
  });
}

function headEnd(buf: Buffer): { head: number; body: number } | null {
  const crlf = buf.indexOf("\r\n\r\n");
  const lf = buf.indexOf("\n\n");
  if (crlf === -1 && lf === -1) return null;
  if (lf === -1 || (crlf !== -1 && crlf < lf)) return { head: crlf, body: crlf + 4 };
  return { head: lf, body: lf + 2 };
}

function parseHead(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new CgiError(`git http-backend sent a malformed header line: ${JSON.stringify(line.slice(0, 100))}`);
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() !== "status") {
      headers[name.toLowerCase()] = value;
      continue;
    }
    const code = Number(/^(\d{3})\b/.exec(value)?.[1]);
    if (!(code >= 100 && code <= 599)) throw new CgiError(`git http-backend sent a bad status: ${JSON.stringify(value)}`);
    status = code;
  }
  return { status, headers };
}
