// Moved to test/helpers/factories.ts; kept so files written against the old path still import.
export { buildCard } from '../helpers/factories.js';
