PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name));
INSERT INTO iceberg_tables VALUES('default','demo','events','warehouse/demo/events/metadata/00002-1e856d9c-61f5-40a3-bc30-f2dc5fc72dfc.metadata.json','warehouse/demo/events/metadata/00001-9098f063-33ff-4b6b-beeb-56590f00d8dd.metadata.json','TABLE');
CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, property_key));
INSERT INTO iceberg_namespace_properties VALUES('default','demo','exists','true');
COMMIT;
