/** Whether console/dist is there and newer than console/'s sources. */
export function consoleIsCurrent(): boolean;
/** Builds the console when it is missing or stale; `ifTools`: skip quietly without vite. */
export function ensureConsole(options?: { ifTools?: boolean }): void;
