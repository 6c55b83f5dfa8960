// Which PluginEntries owns the one plugin drawer or dialog of the page: opening another closes the first.
import { ref } from 'vue';

export const overlayOwner = ref<number | null>(null);

let instances = 0;
/** A new id for a PluginEntries component. */
export const nextInstance = () => ++instances;
