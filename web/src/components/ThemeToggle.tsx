import type { ComponentType, SVGProps } from "react";
import { useTheme, type ThemePreference } from "../hooks/useTheme";
import { MonitorIcon, MoonIcon, SunIcon } from "./icons";

const OPTIONS: Array<{ value: ThemePreference; label: string; Icon: ComponentType<SVGProps<SVGSVGElement>> }> = [
  { value: "system", label: "System theme", Icon: MonitorIcon },
  { value: "light", label: "Light theme", Icon: SunIcon },
  { value: "dark", label: "Dark theme", Icon: MoonIcon },
];

export function ThemeToggle() {
  const { preference, choose } = useTheme();
  return (
    <div role="group" aria-label="Theme" className="inline-flex rounded-md border border-zinc-200 p-0.5 dark:border-zinc-800">
      {OPTIONS.map(({ value, label, Icon }) => (
        <button
          key={value}
          type="button"
          title={label}
          aria-label={label}
          aria-pressed={preference === value}
          onClick={() => choose(value)}
          className="rounded p-1.5 text-zinc-500 hover:text-zinc-900 aria-pressed:bg-zinc-100 aria-pressed:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100 dark:aria-pressed:bg-zinc-800 dark:aria-pressed:text-zinc-100"
        >
          <Icon width={14} height={14} />
        </button>
      ))}
    </div>
  );
}
