// Kind icons: a short label in a coloured disc, coloured by family (OLM's kinds, the
// workloads, configuration, RBAC, the rest), drawn in SVG so that no image is fetched.

import { el } from "./dom.js";

const kinds = {
  Sync: ["sync", "SYNC"], App: ["app", "APP"],
  Subscription: ["olm", "SUB"], InstallPlan: ["olm", "IP"], ClusterServiceVersion: ["olm", "CSV"],
  CatalogSource: ["olm", "CAT"], OperatorGroup: ["olm", "OG"],
  Deployment: ["work", "DEP"], ReplicaSet: ["work", "RS"], Pod: ["work", "POD"], StatefulSet: ["work", "STS"],
  DaemonSet: ["work", "DS"], Job: ["work", "JOB"], CronJob: ["work", "CJ"],
  ConfigMap: ["conf", "CM"], Secret: ["conf", "SEC"], Namespace: ["ns", "NS"],
  ServiceAccount: ["rbac", "SA"], Role: ["rbac", "ROLE"], RoleBinding: ["rbac", "RB"], ClusterRole: ["rbac", "CR"],
  ClusterRoleBinding: ["rbac", "CRB"], Service: ["net", "SVC"], Ingress: ["net", "ING"], NetworkPolicy: ["net", "NP"],
  CustomResourceDefinition: ["crd", "CRD"], PersistentVolumeClaim: ["conf", "PVC"],
};

// kindIcon is [family, label] of a kind: the label of an unknown kind is its capitals.
export function kindIcon(kind) {
  if (kinds[kind]) return kinds[kind];
  const caps = (kind || "?").replace(/[^A-Z]/g, "") || (kind || "?").slice(0, 3).toUpperCase();
  return ["other", caps.slice(0, 4)];
}

// iconSVG draws a kind's icon centred at (x, y) with radius r, in an SVG drawing.
export function iconSVG(kind, x, y, r) {
  const [family, label] = kindIcon(kind);
  return el("g", { class: "kicon k-" + family, "aria-hidden": "true" },
    el("circle", { cx: x, cy: y, r }),
    el("text", { x, y: y + 3.5, "text-anchor": "middle", class: label.length > 3 ? "long" : "" }, label));
}

// iconHTML is a kind's icon as a small inline SVG for HTML (the list view, the panel).
export function iconHTML(kind) {
  return el("svg", { class: "kicon-inline", width: 22, height: 22, viewBox: "0 0 22 22", "aria-hidden": "true" }, iconSVG(kind, 11, 11, 10));
}
