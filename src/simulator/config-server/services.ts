import type { ApplicationPackage } from '../../schema/app-package.js';

/** One simulated service process of a deployed application, as serviceconverge lists it. */
export interface SimulatedService {
  host: string;
  port: number;
  type: string;
  clusterName: string;
  /** `admin`, `container` or `content`: the restart API's clusterType. */
  clusterType: 'admin' | 'container' | 'content';
}

export const simulatedHost = 'localhost';

/** The processes a single-node Vespa would run for this package, on Vespa's customary ports. */
export function servicesOf(pkg: ApplicationPackage): SimulatedService[] {
  const services: SimulatedService[] = [
    { host: simulatedHost, port: 19080, type: 'logserver', clusterName: 'admin', clusterType: 'admin' },
    { host: simulatedHost, port: 19099, type: 'slobrok', clusterName: 'admin', clusterType: 'admin' },
  ];
  if (pkg.contents.length > 0) {
    services.push({
      host: simulatedHost,
      port: 19050,
      type: 'container-clustercontroller',
      clusterName: 'cluster-controllers',
      clusterType: 'admin',
    });
  }
  pkg.containers.forEach((c, i) =>
    services.push({
      host: simulatedHost,
      port: 8080 + i,
      type: 'container',
      clusterName: c.id,
      clusterType: 'container',
    }),
  );
  pkg.contents.forEach((c, i) => {
    const base = 19100 + 20 * i;
    services.push(
      { host: simulatedHost, port: base + 7, type: 'searchnode', clusterName: c.id, clusterType: 'content' },
      { host: simulatedHost, port: base + 8, type: 'storagenode', clusterName: c.id, clusterType: 'content' },
      { host: simulatedHost, port: base + 11, type: 'distributor', clusterName: c.id, clusterType: 'content' },
    );
  });
  return services;
}
