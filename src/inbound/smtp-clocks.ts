/** How long a session and a message may take, and the slowest a message's bytes may arrive. */
export interface ClockSettings {
  /** A session that starts no message this long is closed (NOOP, RSET, MAIL and RCPT do not reset it). */
  idleMs: number;
  /** A session is closed this long after it connected, whatever it is doing. */
  sessionMs: number;
  /** A message's DATA is closed this long after it began. */
  dataMs: number;
  /** During DATA, at least this many bytes must arrive in every `dataWindowMs`. */
  dataMinBytes: number;
  dataWindowMs: number;
}

/** The 421 texts a client sees when a clock runs out (docs/public-doors.md). */
export const CLOCK_TEXT = {
  idle: '4.4.2 idle for too long, closing',
  session: '4.4.2 session lasted too long, closing',
  data: '4.4.2 message took too long to send, closing',
  rate: '4.4.2 message data arriving too slowly, closing',
} as const;

/**
 * The clocks of one session, which reading the socket does not reset (smtp-server's socket timeout is reset by
 * every byte, so a sender dripping one byte at a time was never closed): a total lifetime from connect;
 * outside DATA an idle clock that only the start of a message stops; during DATA a lifetime of the message
 * and a minimum rate (`dataMinBytes` in each `dataWindowMs`). `close`
 * is called once, with the text of the clock that ran out.
 */
export function sessionClocks(s: ClockSettings, close: (text: string) => void) {
  let done = false;
  const fire = (text: string) => {
    if (done) return;
    done = true;
    stopData();
    stopIdle();
    clearTimeout(life);
    close(text);
  };
  const life = setTimeout(() => fire(CLOCK_TEXT.session), s.sessionMs);
  life.unref();
  let idle: NodeJS.Timeout | null = null;
  const stopIdle = () => {
    if (idle) clearTimeout(idle);
    idle = null;
  };
  let data: NodeJS.Timeout | null = null;
  let rate: NodeJS.Timeout | null = null;
  let windowBytes = 0;
  const stopData = () => {
    if (data) clearTimeout(data);
    if (rate) clearInterval(rate);
    data = rate = null;
  };
  return {
    /** (Re)starts the idle clock: the session must start a message before it runs out. */
    idleFrom(): void {
      stopIdle();
      if (done) return;
      idle = setTimeout(() => fire(CLOCK_TEXT.idle), s.idleMs);
      idle.unref();
    },
    /** DATA began: the idle clock stops, the message's own lifetime and rate clocks start. */
    startData(): void {
      stopIdle();
      stopData();
      if (done) return;
      windowBytes = 0;
      data = setTimeout(() => fire(CLOCK_TEXT.data), s.dataMs);
      rate = setInterval(() => {
        if (windowBytes < s.dataMinBytes) return fire(CLOCK_TEXT.rate);
        windowBytes = 0;
      }, s.dataWindowMs);
      data.unref();
      rate.unref();
    },
    /** Bytes of the message arrived. */
    bytes(n: number): void {
      windowBytes += n;
    },
    /** The message's final dot arrived (or it was abandoned): only the session's lifetime runs on. */
    endData: stopData,
    /** The session closed. */
    stop(): void {
      done = true;
      stopData();
      stopIdle();
      clearTimeout(life);
    },
  };
}
