import { ensureConsole } from '../../scripts/ensureConsole.mjs';

/** The console's build (console/dist), made once when missing or older than its sources (about a second). */
export const builtConsole = () => ensureConsole();
