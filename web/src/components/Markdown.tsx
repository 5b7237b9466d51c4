import { Fragment, memo, useMemo, type ReactNode } from "react";
import { parseBlocks, parseInline, splitChunks, type Block, type Inline } from "../lib/markdown";

/**
 * Markdown as React elements (see lib/markdown.ts: no raw HTML, safe links only). The text is cut
 * into chunks at blank lines outside code fences and each chunk is memoized on its text, so while
 * an agent streams only the last chunk re-renders and the rest of the output stays put.
 */
export function Markdown({ text, streaming = false, className = "" }: { text: string; streaming?: boolean; className?: string }) {
  const chunks = useMemo(() => splitChunks(text), [text]);
  const caret = streaming ? "[&>:last-child]:after:ml-0.5 [&>:last-child]:after:animate-pulse [&>:last-child]:after:text-indigo-500 [&>:last-child]:after:content-['▍']" : "";
  return (
    <div className={`text-sm leading-relaxed break-words text-zinc-800 dark:text-zinc-200 ${caret} ${className}`}>
      {chunks.map((chunk, i) => (
        <Chunk key={i} text={chunk} />
      ))}
    </div>
  );
}

const Chunk = memo(function Chunk({ text }: { text: string }) {
  const blocks = useMemo(() => parseBlocks(text), [text]);
  return <>{blocks.map(renderBlock)}</>;
});

const HEADING_CLASS = ["", "text-base font-semibold", "text-[0.95rem] font-semibold", "text-sm font-semibold", "text-sm font-semibold", "text-sm font-medium", "text-sm font-medium text-zinc-600 dark:text-zinc-400"];

function renderBlock(block: Block, key: number): ReactNode {
  switch (block.t) {
    case "heading": {
      const H = `h${block.level}` as "h1";
      return (
        <H key={key} className={`mt-3 mb-1.5 first:mt-0 ${HEADING_CLASS[block.level]}`}>
          {renderInline(parseInline(block.text))}
        </H>
      );
    }
    case "paragraph":
      return (
        <p key={key} className="my-2 first:mt-0 last:mb-0">
          {renderInline(parseInline(block.text))}
        </p>
      );
    case "code":
      return (
        <pre key={key} data-lang={block.lang || undefined} className="my-2 overflow-x-auto rounded-md bg-zinc-50 px-3 py-2 font-mono text-xs leading-relaxed text-zinc-800 ring-1 ring-zinc-200 ring-inset first:mt-0 last:mb-0 dark:bg-zinc-950/70 dark:text-zinc-200 dark:ring-zinc-800">
          <code>{block.text}</code>
        </pre>
      );
    case "list": {
      const items = block.items.map((item, i) => (
        <li key={i} className="my-0.5 pl-0.5">
          {block.tight && item.length === 1 && item[0]?.t === "paragraph" ? renderInline(parseInline(item[0].text)) : item.map(renderBlock)}
        </li>
      ));
      return block.ordered ? (
        <ol key={key} start={block.start} className="my-2 list-decimal pl-5 first:mt-0 last:mb-0 marker:text-zinc-400">
          {items}
        </ol>
      ) : (
        <ul key={key} className="my-2 list-disc pl-5 first:mt-0 last:mb-0 marker:text-zinc-400">
          {items}
        </ul>
      );
    }
    case "quote":
      return (
        <blockquote key={key} className="my-2 border-l-2 border-zinc-300 pl-3 text-zinc-600 first:mt-0 last:mb-0 dark:border-zinc-700 dark:text-zinc-400">
          {block.children.map(renderBlock)}
        </blockquote>
      );
    case "hr":
      return <hr key={key} className="my-3 border-zinc-200 dark:border-zinc-800" />;
  }
}

function renderInline(nodes: Inline[]): ReactNode {
  return nodes.map((node, i) => {
    switch (node.t) {
      case "text":
        return <Fragment key={i}>{node.text}</Fragment>;
      case "br":
        return <br key={i} />;
      case "code":
        return (
          <code key={i} className="rounded bg-zinc-100 px-1 py-0.5 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200">
            {node.text}
          </code>
        );
      case "strong":
        return (
          <strong key={i} className="font-semibold text-zinc-900 dark:text-zinc-50">
            {renderInline(node.children)}
          </strong>
        );
      case "em":
        return <em key={i}>{renderInline(node.children)}</em>;
      case "link":
        return (
          <a key={i} href={node.href} target="_blank" rel="noopener noreferrer nofollow" className="font-medium text-indigo-600 underline decoration-indigo-600/30 underline-offset-2 hover:decoration-indigo-600 dark:text-indigo-400">
            {renderInline(node.children)}
          </a>
        );
    }
  });
}
