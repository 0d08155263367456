"""NodeDeclaredFeatures: pods land only on nodes that declare the features they need
(upstream ``plugins/nodedeclaredfeatures``; the feature registry is
:mod:`kubesched.api.nodedeclaredfeatures`).

Behind the NodeDeclaredFeatures gate (alpha and off in 1.35, beta and on in 1.36, GA in
1.37); with the gate on the default profile adds it after every other plugin.
"""
