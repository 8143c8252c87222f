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

/** A heading as a link's anchor can hold it: what would end or split the link (`#` a
 *  nested heading, `|` an alias, `]]`, `^` a block, `%%` a comment) as one space, as the
 *  daemon writes a hit's address. Obsidian compares a link's heading with the note's
 *  after `stripHeading`, which makes them spaces: the link still finds the section. Pure. */
export function linkHeading(heading: string): string {
  if (!/[#|[\]^%\r\n]/.test(heading)) return heading;
  return heading.replace(/[#|[\]^%\r\n]+/g, " ").replace(/ {2,}/g, " ").replace(/^ +| +$/g, "");
}
