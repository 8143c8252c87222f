/** Small timing helpers. */

/**
 * Debounce that answers at once when calls are rare: the first call in a quiet
 * period runs now (so switching notes shows related notes without waiting), and a
 * burst of calls (flicking through notes) ends with exactly one trailing run.
 */
export function leadingDebounce<A extends unknown[]>(
  fn: (...args: A) => void,
  ms: number,
): { (...args: A): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let pending: A | null = null;
  const quiet = () => {
    timer = null;
    if (pending) {
      const args = pending;
      pending = null;
      timer = setTimeout(quiet, ms);
      fn(...args);
    }
  };
  const call = (...args: A) => {
    if (timer === null) {
      timer = setTimeout(quiet, ms);
      fn(...args);
    } else {
      pending = args;
    }
  };
  call.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    pending = null;
  };
  return call;
}

/** A plain trailing debounce. */
export function trailingDebounce<A extends unknown[]>(
  fn: (...args: A) => void,
  ms: number,
): { (...args: A): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const call = (...args: A) => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, ms);
  };
  call.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return call;
}
