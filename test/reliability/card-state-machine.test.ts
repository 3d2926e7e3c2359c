import { stateMachineSuite } from './card-state-machine.js';

// The model and the run live in card-state-machine.ts; card-state-machine.chaos.test.ts runs many more.
stateMachineSuite('review card state machine (model-based, fast-check)', { cards: 4, steps: 14, runs: 25, timeoutMs: 180_000 });
