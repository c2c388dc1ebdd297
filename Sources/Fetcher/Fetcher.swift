// The Open-Meteo HTTP client, request building, batching and geocoding live here.
