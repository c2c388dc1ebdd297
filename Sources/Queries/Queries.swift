// Verification scores, forecast queries and exports live here.
