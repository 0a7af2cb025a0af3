import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { live } from './live';
import { loadServiceColors } from './serviceColors';
import './styles.css';

live.start();
void loadServiceColors();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
