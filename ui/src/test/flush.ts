// Lets pending promises settle and Svelte apply what they changed, a few rounds deep (a load
// that awaits the IPC mock, then the store, then the component).
import { tick } from 'svelte';

export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await Promise.resolve();
    await tick();
  }
}
