from django.db import models


class Order(models.Model):
    item = models.CharField(max_length=200)
