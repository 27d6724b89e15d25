#define FACTOR 5.0f
