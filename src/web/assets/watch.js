// Live updates from the public watch feed: the Kubernetes-style API (`/k8s`) streams one JSON
// event per line for `?watch=1`. The dashboard uses the events only as a signal that something
// changed, and then reads the Magnum API again; the periodic refresh stays as a safety net.

/**
 * Follow a watch URL until `stop()`: call `onEvent(event)` for each event line, reconnect after
 * the server ends the stream or the network fails (backing off up to 30 s).
 * @param {string} url the watch URL (`…?watch=1`)
 * @param {() => Record<string, string>} headers the request headers (read at each connect)
 * @param {(event: { type: string, object: unknown }) => void} onEvent
 * @returns {() => void} stop
 */
export function follow(url, headers, onEvent) {
  const ctl = new AbortController();
  let delay = 1000;
  const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  (async () => {
    while (!ctl.signal.aborted) {
      try {
        const res = await fetch(url, { headers: headers(), signal: ctl.signal });
        if (!res.ok || !res.body) throw new Error(`watch answered ${res.status}`);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            let event = null;
            try {
              event = JSON.parse(line);
            } catch {
              event = null;
            }
            if (event && typeof event.type === 'string') onEvent(event);
          }
          delay = 1000;
        }
      } catch {
        if (ctl.signal.aborted) return;
      }
      await wait(delay);
      delay = Math.min(delay * 2, 30_000);
    }
  })();
  return () => ctl.abort();
}
