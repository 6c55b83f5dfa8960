// Record tagger: a Vue app in the side panel that lists the ticked records and writes a note into one of them.
/* global Vue, TableSDK */
TableSDK.ready(async (sdk) => {
  const context = await sdk.ui.getContext();
  const config = await sdk.config.get();
  const field = config.field || 'Notes';
  Vue.createApp({
    data: () => ({ records: [], error: '', done: {} }),
    async mounted() {
      try {
        for (const id of context.selection.recordIds) {
          this.records.push(await sdk.table.getRecord({ tableId: context.tableId, recordId: id }));
        }
      } catch (e) {
        this.error = `${e.code}: ${e.message}`;
      }
    },
    methods: {
      label(record) {
        const first = Object.values(record.values).find((v) => typeof v === 'string' && v);
        return first || record.id;
      },
      async tag(record) {
        try {
          const updated = await sdk.record.update({ tableId: context.tableId, recordId: record.id, values: { [field]: config.note || 'tagged' } });
          this.done[record.id] = true;
          await sdk.storage.set({ key: 'last-tagged', value: updated.id });
        } catch (e) {
          this.error = `${e.code}: ${e.message}`;
        }
      },
    },
    template: `
      <h1>{{ records.length }} ticked record(s)</h1>
      <p v-if="error" class="error" data-testid="error">{{ error }}</p>
      <ul><li v-for="r in records" :key="r.id" :data-id="r.id">
        <span>{{ label(r) }}</span>
        <button @click="tag(r)" :disabled="done[r.id]">{{ done[r.id] ? 'Tagged' : 'Tag' }}</button>
      </li></ul>`,
  }).mount('#app');
});
