import { registerExperimentFollowUps } from '../src/experiments/follow-ups.js';
import { EventHandlers } from '../src/events/event-map.js';
import { registerWorkflowFollowUps } from '../src/workflows/card-decisions.js';

/**
 * The handlers the `event.deliver` job runs: each area that acts on an event registers its own here, when the pool
 * starts (docs/architecture.md, "Events"). A new area's follow-up adds its `register…` call.
 */
export function eventHandlers(): EventHandlers {
  const handlers = new EventHandlers();
  registerWorkflowFollowUps(handlers);
  registerExperimentFollowUps(handlers);
  return handlers;
}
