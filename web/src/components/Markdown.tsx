import { memo, useMemo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkBreaks from "remark-breaks";
import remarkGfm from "remark-gfm";
import { useThrottled } from "../hooks/useThrottled";
import { splitChunks } from "../lib/markdown-chunks";

/**
 * Agent output as Markdown: CommonMark and GitHub's extensions (tables, strikethrough, task lists,
 * bare URLs), a line break where the text has one. Raw HTML is never interpreted: it shows as
 * text (no rehype-raw). Links keep only http(s) and mailto targets, anything else (javascript:,
 * data:, relative) is its label as plain text; images are links to them, never loaded.
 *
 * While `streaming`, the text is re-rendered at most ~10 times a second, and it is cut into chunks
 * (lib/markdown-chunks.ts) memoized on their text, so only the last chunk is parsed again; the
 * final text is always rendered.
 */
/** While a text streams, it is rendered at most once per this many ms. */
export const STREAM_RENDER_MS = 100;

export function Markdown({ text, streaming = false, className = "" }: { text: string; streaming?: boolean; className?: string }) {
  const shown = useThrottled(text, STREAM_RENDER_MS, streaming);
  const chunks = useMemo(() => splitChunks(shown), [shown]);
  const caret = streaming ? "[&>:last-child]:after:ml-0.5 [&>:last-child]:after:animate-pulse [&>:last-child]:after:text-indigo-500 [&>:last-child]:after:content-['▍']" : "";
  return (
    <div className={`text-sm leading-relaxed break-words text-zinc-800 dark:text-zinc-200 ${caret} ${className}`}>
      {chunks.map((chunk, i) => (
        <Chunk key={i} text={chunk} />
      ))}
    </div>
  );
}

const REMARK_PLUGINS = [remarkGfm, remarkBreaks];

const Chunk = memo(function Chunk({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={REMARK_PLUGINS} components={COMPONENTS} urlTransform={safeUrl}>
      {text}
    </ReactMarkdown>
  );
});

/** Only web and mail links; anything else (javascript:, data:, relative) is dropped. */
export function safeUrl(url: string): string | undefined {
  const trimmed = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(trimmed) ? trimmed : undefined;
}

const BLOCK = "first:mt-0 last:mb-0";
const HEADING = "mt-3 mb-1.5 first:mt-0";
const LINK = "font-medium text-indigo-600 underline decoration-indigo-600/30 underline-offset-2 hover:decoration-indigo-600 dark:text-indigo-400";
const CELL = "border border-zinc-200 px-2.5 py-1 text-left align-top dark:border-zinc-800";

const COMPONENTS: Components = {
  h1: ({ children }) => <h1 className={`${HEADING} text-base font-semibold`}>{children}</h1>,
  h2: ({ children }) => <h2 className={`${HEADING} text-[0.95rem] font-semibold`}>{children}</h2>,
  h3: ({ children }) => <h3 className={`${HEADING} text-sm font-semibold`}>{children}</h3>,
  h4: ({ children }) => <h4 className={`${HEADING} text-sm font-semibold`}>{children}</h4>,
  h5: ({ children }) => <h5 className={`${HEADING} text-sm font-medium`}>{children}</h5>,
  h6: ({ children }) => <h6 className={`${HEADING} text-sm font-medium text-zinc-600 dark:text-zinc-400`}>{children}</h6>,
  p: ({ children }) => <p className={`my-2 ${BLOCK}`}>{children}</p>,
  pre: ({ children }) => (
    <pre className={`my-2 overflow-x-auto rounded-md bg-zinc-50 px-3 py-2 font-mono text-xs leading-relaxed text-zinc-800 ring-1 ring-zinc-200 ring-inset dark:bg-zinc-950/70 dark:text-zinc-200 dark:ring-zinc-800 ${BLOCK}`}>{children}</pre>
  ),
  // a code block's text ends with a newline (inside <pre>); inline code never holds one
  code: ({ children, className }) => {
    const block = typeof children === "string" && children.includes("\n");
    const lang = /^language-(\S+)/.exec(className ?? "")?.[1];
    if (block) return <code data-lang={lang}>{children}</code>;
    return <code className="rounded bg-zinc-100 px-1 py-0.5 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200">{children}</code>;
  },
  ul: ({ children, className }) => (
    <ul className={`my-2 ${className?.includes("contains-task-list") ? "list-none pl-1" : "list-disc pl-5"} marker:text-zinc-400 ${BLOCK}`}>{children}</ul>
  ),
  ol: ({ children, start }) => (
    <ol start={start} className={`my-2 list-decimal pl-5 marker:text-zinc-400 ${BLOCK}`}>
      {children}
    </ol>
  ),
  li: ({ children }) => <li className="my-0.5 pl-0.5">{children}</li>,
  input: ({ type, checked }) => (type === "checkbox" ? <input type="checkbox" checked={checked ?? false} disabled readOnly className="mr-1.5 align-middle accent-indigo-600" /> : null),
  blockquote: ({ children }) => <blockquote className={`my-2 border-l-2 border-zinc-300 pl-3 text-zinc-600 dark:border-zinc-700 dark:text-zinc-400 ${BLOCK}`}>{children}</blockquote>,
  hr: () => <hr className="my-3 border-zinc-200 dark:border-zinc-800" />,
  strong: ({ children }) => <strong className="font-semibold text-zinc-900 dark:text-zinc-50">{children}</strong>,
  del: ({ children }) => <del className="text-zinc-500 dark:text-zinc-400">{children}</del>,
  a: ({ href, children }) =>
    href ? (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow" className={LINK}>
        {children}
      </a>
    ) : (
      <>{children}</>
    ),
  img: ({ src, alt }) =>
    typeof src === "string" && src ? (
      <a href={src} target="_blank" rel="noopener noreferrer nofollow" className={LINK}>
        {alt || src}
      </a>
    ) : (
      <>{alt}</>
    ),
  table: ({ children }) => (
    <div className={`my-2 overflow-x-auto ${BLOCK}`}>
      <table className="w-max max-w-full border-collapse text-left text-[0.8rem]">{children}</table>
    </div>
  ),
  thead: ({ children }) => <thead className="bg-zinc-50 dark:bg-zinc-800/60">{children}</thead>,
  tr: ({ children }) => <tr className="even:bg-zinc-50/60 dark:even:bg-zinc-900/40">{children}</tr>,
  th: ({ children, style }) => (
    <th style={style} className={`${CELL} font-semibold text-zinc-900 dark:text-zinc-100`}>
      {children}
    </th>
  ),
  td: ({ children, style }) => (
    <td style={style} className={CELL}>
      {children}
    </td>
  ),
};
