// Web app entry: mounts the Vue app with its router once the signed-in user is known.
import { createApp } from 'vue';
import App from './App.vue';
import { loadMe } from './api';
import { router } from './router';
import './style.css';
// The UI kit's styles come after the base styles (its ui- classes override the global button and input rules).
import './ui/ui.css';

loadMe().finally(() => createApp(App).use(router).mount('#root'));
