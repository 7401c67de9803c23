import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { type Action, initialState, type State } from "../lib/store";

export interface Store {
  state: State;
  dispatch: (a: Action) => void;
}

export const StoreContext = createContext<Store>({ state: initialState(), dispatch: () => {} });

export function useStore(): Store {
  return useContext(StoreContext);
}

/** The clock, re-read every `everyMs`, for ages and uptimes that grow between reports. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), everyMs);
    return () => window.clearInterval(t);
  }, [everyMs]);
  return now;
}
