/**
 * Icons as inline SVG in the text's colour: glyphs such as 🔗 or ⤓ come from whatever fonts the machine has,
 * and without an emoji font they render as empty boxes.
 */
const PATHS = {
  link: 'M6.5 9.5l3-3M7 4.5l1.2-1.2a2.5 2.5 0 013.5 3.5L10.5 8M9 11.5l-1.2 1.2a2.5 2.5 0 01-3.5-3.5L5.5 8',
  download: 'M8 2.5v8M4.5 7L8 10.5 11.5 7M3 13.5h10',
  swap: 'M3 5.5h9.5M10 3l2.5 2.5L10 8M13 10.5H3.5M6 8l-2.5 2.5L6 13',
  close: 'M4 4l8 8M12 4l-8 8',
  up: 'M8 13V3.5M4 7.5l4-4 4 4',
  down: 'M8 3v9.5M4 8.5l4 4 4-4',
  right: 'M6 4l4 4-4 4',
  open: 'M4 6l4 4 4-4',
  play: 'M5 3.5v9l7.5-4.5z',
  pause: 'M5 3.5v9M11 3.5v9',
} as const;

export type IconName = keyof typeof PATHS;

const FILLED: ReadonlySet<IconName> = new Set(['play']);

export function Icon({ name, title }: { name: IconName; title?: string }) {
  const filled = FILLED.has(name);
  return (
    <svg
      className="icon"
      data-icon={name}
      viewBox="0 0 16 16"
      width="1em"
      height="1em"
      fill={filled ? 'currentColor' : 'none'}
      stroke="currentColor"
      strokeWidth={filled ? 1 : 1.6}
      strokeLinecap="round"
      strokeLinejoin="round"
      role={title ? 'img' : undefined}
      aria-hidden={title ? undefined : true}
      aria-label={title}
    >
      <path d={PATHS[name]} />
    </svg>
  );
}
