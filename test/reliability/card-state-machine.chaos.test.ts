import { stateMachineSuite } from './card-state-machine.js';

// Long variant of card-state-machine.test.ts, run by `npm run test:chaos`: more runs, more cards, longer runs.
stateMachineSuite('chaos: review card state machine (model-based, fast-check)', { cards: 6, steps: 30, runs: 300, timeoutMs: 600_000 });
