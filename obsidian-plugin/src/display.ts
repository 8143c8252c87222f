/** How a hit reads in the pane and the modal. Pure. */

import type { Hit } from "./types";

/** The heading path without a first element that only repeats the note's title. */
export function headingTrail(hit: Hit): string {
  const h = hit.heading[0]?.trim() === hit.title.trim() ? hit.heading.slice(1) : hit.heading;
  return h.join(" › ");
}

/** The snippet without the markdown of the heading it starts with (the heading is shown). */
export function cleanSnippet(hit: Hit): string {
  let s = hit.snippet.trim();
  const last = hit.heading[hit.heading.length - 1];
  const m = /^#{1,6}\s+/.exec(s);
  if (m) {
    s = s.slice(m[0].length);
    if (last && s.startsWith(last)) s = s.slice(last.length);
  }
  return s.trim() || hit.snippet.trim();
}
