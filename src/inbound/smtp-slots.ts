/** The listener's session slots: how many it holds, how many one network may hold, how many wait for newcomers. */
export interface SlotSettings {
  /** Sessions the listener holds at once, all clients together. */
  maxClients: number;
  /** Sessions one network (an IPv4 /24, an IPv6 /48) holds at once. */
  sessionsPerNetwork: number;
  /** Of `maxClients`, the slots only a network holding no session yet may take. */
  reservedSlots: number;
}

/** Why a session was not given a slot: the listener is full, its network holds its cap, or only reserved slots are left. */
export type SlotRefusal = 'full' | 'network' | 'reserved';

/** The 421 a session refused a slot gets (docs/public-doors.md). */
export const SLOT_TEXT: Record<SlotRefusal | 'address', string> = {
  address: '4.7.0 too many sessions from your address; try again later',
  network: '4.7.0 too many sessions from your network; try again later',
  reserved: '4.7.0 the sessions left are kept for other networks; try again later',
  full: '4.3.2 too many sessions at once; try again later',
};

/**
 * Session slots by network, in memory, for one listener. A network that already holds a session shares
 * `maxClients - reservedSlots` slots with every other connected network; the last `reservedSlots` go only
 * to a network with no session yet, so networks holding their caps can never take the slots a new network
 * needs to get in. The map holds only networks with an open session (at most `maxClients` entries).
 */
export function createSessionSlots(s: SlotSettings) {
  const held = new Map<string, number>();
  let open = 0;
  const shared = Math.max(1, s.maxClients - Math.min(s.reservedSlots, s.maxClients - 1));
  return {
    /** Why `network` may not open a session now; null when it may (nothing is counted: `take` does). */
    refusal(network: string): SlotRefusal | null {
      const mine = held.get(network) ?? 0;
      if (open >= s.maxClients) return 'full';
      if (mine >= s.sessionsPerNetwork) return 'network';
      if (mine > 0 && open >= shared) return 'reserved';
      return null;
    },
    take(network: string): void {
      held.set(network, (held.get(network) ?? 0) + 1);
      open++;
    },
    release(network: string): void {
      const mine = held.get(network);
      if (!mine) return;
      if (mine === 1) held.delete(network);
      else held.set(network, mine - 1);
      open--;
    },
    /** Sessions held now (tests). */
    get open() {
      return open;
    },
  };
}
