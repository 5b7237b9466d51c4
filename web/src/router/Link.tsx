import type { AnchorHTMLAttributes, MouseEvent } from "react";
import { navigate } from "./history";

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string };

/** A real <a> (open in new tab, copy link and keyboard work) that navigates without a reload. */
export function Link({ href, onClick, ...rest }: LinkProps) {
  const handleClick = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (rest.target && rest.target !== "_self") return;
    e.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={handleClick} {...rest} />;
}
