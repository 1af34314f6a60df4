/**
 * The personal API key and the chosen project, for this browser tab's session only (sessionStorage: gone when the
 * tab closes, never in localStorage or a cookie). Everything else comes from the server through the query cache.
 */
const KEY = 'hogstream.personalApiKey';
const PROJECT = 'hogstream.projectId';

const listeners = new Set<() => void>();
const changed = () => {
  for (const listener of listeners) listener();
};

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  projectId: (): number | null => {
    const value = Number(sessionStorage.getItem(PROJECT));
    return Number.isInteger(value) && value > 0 ? value : null;
  },
  signIn(key: string) {
    sessionStorage.setItem(KEY, key);
    changed();
  },
  chooseProject(id: number) {
    sessionStorage.setItem(PROJECT, String(id));
    changed();
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PROJECT);
    changed();
  },
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
