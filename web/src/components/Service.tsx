import { markBidi } from '../text';
import type { CSSProperties } from 'react';
import { serviceColor } from '../format';

/**
 * What every element showing a service's colour carries: the service's name and its colour as
 * `--service-color`, which the stylesheet paints with (and tests read to check that colours differ).
 */
export function serviceAttrs(service: string, style?: CSSProperties): { 'data-service': string; style: CSSProperties } {
  return { 'data-service': service, style: { ...style, ['--service-color' as string]: serviceColor(service) } };
}

/** A small square of the service's colour, before its name. */
export function ServiceDot({ service }: { service: string }) {
  return <span className="svc-dot" {...serviceAttrs(service)} />;
}

/** The services of a trace, each with its colour: the key to the waterfall's colours. */
export function ServiceLegend({ services }: { services: string[] }) {
  return (
    <div className="legend" aria-label="Services">
      {services.map((s) => (
        <span key={s} className="legend-item">
          <ServiceDot service={s} />
          {markBidi(s)}
        </span>
      ))}
    </div>
  );
}
