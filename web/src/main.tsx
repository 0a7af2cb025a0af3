import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { live } from './live';
import { loadServiceColors } from './serviceColors';
import { loadSignals } from './signals';
import './styles.css';

live.start();
void loadServiceColors();
void loadSignals();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
