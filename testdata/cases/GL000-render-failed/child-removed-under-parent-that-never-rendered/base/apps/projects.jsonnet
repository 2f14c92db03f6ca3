local teams = ["payments", "analytics"];
[{apiVersion: "argoproj.io/v1alpha1", kind: "AppProject", metadata: {name: t, namespace: "argocd"}} for t in teams]
