/* fmnist_classes.h — the names of Fashion-MNIST's ten classes, for the
 * examples that label images or curves by class. */
#ifndef FMNIST_CLASSES_H
#define FMNIST_CLASSES_H

#include "glassbox.h"

/* Indexed by label: gb_mnist_load guarantees every label is below
 * GB_MNIST_CLASSES, and the models' outputs are that wide. */
static const char *const fmnist_class_names[GB_MNIST_CLASSES] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot",
};

#endif
