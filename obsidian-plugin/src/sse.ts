/**
 * An incremental parser for server-sent events (the subset the daemon sends: `event:`,
 * `data:`, comments). Text arrives in arbitrary pieces; whole events come out.
 */

export interface SseEvent {
  event: string; // "message" when the block names none
  data: string;
}

export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];

  /** Feed a piece of the stream; get the events it completed, and whether any line
   *  (a comment such as `: keep-alive` included) arrived. */
  push(text: string): { events: SseEvent[]; comments: string[] } {
    this.buffer += text;
    const events: SseEvent[] = [];
    const comments: string[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const width = this.buffer.startsWith("\r\n", nl) ? 2 : 1;
      if (this.buffer[nl] === "\r" && width === 1 && nl === this.buffer.length - 1) break; // maybe \r\n split
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + width);
      if (line === "") {
        if (this.data.length || this.event) {
          events.push({ event: this.event || "message", data: this.data.join("\n") });
        }
        this.event = "";
        this.data = [];
      } else if (line.startsWith(":")) {
        comments.push(line.slice(1).trim());
      } else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") this.event = value;
        else if (field === "data") this.data.push(value);
      }
    }
    return { events, comments };
  }
}
