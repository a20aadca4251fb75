# Unit tests of the DDI contract seen from the recording miniport, destroy rules, cascade, loader.
